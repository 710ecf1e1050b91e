import fs from 'node:fs';
import path from 'node:path';
import { skimagePhoto } from '../../testkit/media/photos';
import { piiScenes } from '../../testkit/media/pii-scenes';
import { busPhoto } from '../../testkit/media/vehicles';

/**
 * Writes the calibration images of the PII models' int8 quantization (tools/models/quantize-pii.py)
 * into the folder named by its argument: the real photographs the PII tests use (python3-skimage's
 * and `bus.jpg`, fetched into ~/.cache/drivelab by testkit/media) and street scenes of
 * testkit/media/pii-scenes.ts rendered at 1600 px wide — other sizes and plate texts than the
 * 1920 px scenes the recall is measured on, so calibration never sees a measured frame.
 */
async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: pii-calibration.ts <folder>');
  fs.mkdirSync(out, { recursive: true });
  const photos = [
    busPhoto(),
    ...(['astronaut.png', 'coffee.png', 'chelsea.png', 'motorcycle_left.png'] as const).map(skimagePhoto),
  ];
  for (const file of photos) fs.copyFileSync(file, path.join(out, path.basename(file)));
  const scenes = await piiScenes(5, 1600);
  scenes.forEach((s, i) => fs.writeFileSync(path.join(out, `street-${i}.jpg`), s.jpeg));
}

void main();
