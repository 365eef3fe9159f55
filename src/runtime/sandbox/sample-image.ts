import { PNG } from 'pngjs';

const SIZE = 96;

/**
 * A small PNG for demos and tests to send by URL (the control API serves it at /sample.png): a green
 * square with a lighter disc, drawn here so the sandbox needs no file beside its code.
 */
export const sampleImage = (): Buffer => {
  const png = new PNG({ width: SIZE, height: SIZE });
  const centre = SIZE / 2;
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const i = (y * SIZE + x) * 4;
      const inDisc = (x - centre) ** 2 + (y - centre) ** 2 < (SIZE * 0.3) ** 2;
      png.data[i] = inDisc ? 220 : 11;
      png.data[i + 1] = inDisc ? 248 : 110;
      png.data[i + 2] = inDisc ? 198 : 79;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
};
