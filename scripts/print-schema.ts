// Loaded by graphql-codegen (codegen.ts) to obtain the schema built by Pothos.
export { schema } from '../src/schema/index.ts';
