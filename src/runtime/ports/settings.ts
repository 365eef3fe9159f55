// The settings are parsed once at start by runtime/settings.ts (the one reader of process.env); code
// outside runtime sees only their type.
export type { Settings } from '../settings.ts';
