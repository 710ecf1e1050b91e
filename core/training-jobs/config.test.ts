import { isFinished, taskRefusal, trainedModelVersion, trainingConfigIn } from './config';

const defaults = {
  epochs: 15,
  learning_rate: 0.01,
  batch_size: 64,
  heads: ['cls' as const],
  anchor_l2: 10,
  seed: 0,
};
const TrainingConfigIn = trainingConfigIn(defaults);

describe('training config', () => {
  it('fills each field left out with its default and refuses unknown ones', () => {
    expect(TrainingConfigIn.parse({})).toEqual(defaults);
    expect(TrainingConfigIn.parse({ epochs: 2 })).toEqual({ ...defaults, epochs: 2 });
    expect(TrainingConfigIn.safeParse({ momentum: 0.9 }).success).toBe(false);
    expect(TrainingConfigIn.safeParse({ heads: ['cls', 'cls'] }).success).toBe(false);
    expect(TrainingConfigIn.safeParse({ learning_rate: 0 }).success).toBe(false);
  });

  it('trains 2D detection and refuses 3D by name, and any other task naming the one it trains', () => {
    expect(taskRefusal('detection')).toBeNull();
    for (const t of ['detection3d', '3d', 'cuboid3d', 'lidar_detection'])
      expect(taskRefusal(t)).toMatch(/^3D training is refused/);
    expect(taskRefusal('segmentation')).toMatch(/"segmentation" cannot be trained here: only detection/);
  });

  it('derives the model version from the job and knows the final statuses', () => {
    expect(trainedModelVersion('0b9c3f1e-7a44-4d1e-9c51-3a8f2f0b1c2d')).toBe(
      'trained-0b9c3f1e-7a44-4d1e-9c51-3a8f2f0b1c2d',
    );
    expect(['completed', 'failed', 'cancelled'].every(isFinished)).toBe(true);
    expect(['queued', 'queued-cloud', 'running'].some(isFinished)).toBe(false);
  });
});
