import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built by scripts/build.mjs (root: dashboard/) into dist/dashboard, which the service serves at /.
// `npx vite dashboard` serves it with live reload, sending API calls to a service on :3000.
export default defineConfig({
  base: '/',
  plugins: [react()],
  build: { outDir: '../dist/dashboard', emptyOutDir: true, reportCompressedSize: false, chunkSizeWarningLimit: 1024 },
  server: { proxy: { '/graphql': { target: 'http://127.0.0.1:3000', ws: true } } },
});
