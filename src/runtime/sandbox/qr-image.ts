import { createRequire } from 'node:module';
import { PNG } from 'pngjs';

// jsqr is CommonJS with a default export that NodeNext types cannot see through.
const jsQR = createRequire(import.meta.url)('jsqr') as (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;

/** What a phone's camera does: reads the QR code out of a PNG data URL. */
export const readQrImage = (dataUrl: string): string => {
  const match = /^data:image\/png;base64,(.+)$/.exec(dataUrl);
  if (!match?.[1]) throw new Error('not a PNG data URL');
  const png = PNG.sync.read(Buffer.from(match[1], 'base64'));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (!code) throw new Error('the image holds no readable QR code');
  return code.data;
};
