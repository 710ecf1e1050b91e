/**
 * The built-in trainer's contract (docs/training.md): fine-tunes the detection head of a YOLOX-family
 * ONNX model on labelled images, from features computed with onnxruntime, and writes the new
 * weights back into the graph. (Stub: the implementation is being built for issue 15.)
 */

/** One labelled image of a training or validation split; boxes in image pixels [x1, y1, x2, y2]. */
export interface LabelledImage {
  id: string;
  jpeg: Buffer;
  /** `classIndex`: the index of the class in the parent model's output (COCO-80 for YOLOX). */
  boxes: Array<{ bbox: [number, number, number, number]; classIndex: number }>;
}

export interface HeadFinetuneConfig {
  epochs: number;
  learningRate: number;
  /** Anchor samples per optimisation step. */
  batchSize: number;
  /** Which 1×1 prediction convolutions learn: class scores, objectness, or both. */
  heads: Array<'cls' | 'obj'>;
  /** Pull toward the parent's weights (L2), so classes absent from the data are not forgotten. */
  anchorL2: number;
  seed: number;
}

/** What a resumed attempt needs: the epoch reached and the head weights after it. */
export interface TrainingCheckpoint {
  epoch: number;
  /** Initializer name → values. */
  weights: Record<string, number[]>;
}

export interface EpochReport {
  epoch: number;
  epochs: number;
  trainLoss: number;
  valLoss: number;
  /** Validation metrics after this epoch: mAP@0.5 and AP@0.5 per class index present in the split. */
  metrics: { map50: number; ap50ByClass: Record<string, number> };
  checkpoint: TrainingCheckpoint;
}

export interface HeadFinetuneResult {
  /** The trained model file. */
  onnx: Uint8Array;
  epochs: number;
  /** Validation metrics of the parent and of the trained model, measured by running both files. */
  metrics: {
    parent: { map50: number; ap50ByClass: Record<string, number> };
    trained: { map50: number; ap50ByClass: Record<string, number> };
    trainImages: number;
    valImages: number;
    trainBoxes: number;
  };
}

export interface HeadFinetuneInput {
  parent: Uint8Array;
  train: LabelledImage[];
  val: LabelledImage[];
  config: HeadFinetuneConfig;
  resumeFrom?: TrainingCheckpoint;
  /** Called after every epoch (persist the curve point and the checkpoint, heartbeat). */
  onEpoch: (report: EpochReport) => Promise<void>;
  /** Checked between steps; true stops training with a cancellation error. */
  shouldStop?: () => boolean;
}

export async function fineTuneDetectorHead(input: HeadFinetuneInput): Promise<HeadFinetuneResult> {
  void input;
  return Promise.reject(new Error('fineTuneDetectorHead is being built (issue 15)'));
}
