import { z } from 'zod';
import type { AppConfig } from '../../core/config';
import type { PathRun } from '../../core/fusion';
import type { Box } from '../../core/geometry';
import { postJson } from './endpoint';
import { frameJpeg, type DecodedFrame } from './frame-image';

/**
 * The open-vocabulary detector with segmentation, behind a configured HTTP endpoint
 * (APP_AUTOLABEL__OPEN_VOCAB_URL; contract in docs/autolabel.md). The request carries the frame
 * as a JPEG and the text prompts (ontology class names, underscores as spaces); the answer lists
 * detections as a prompt, a box and optional mask polygons, all in the pixels of the frame sent.
 * Each detection's class is the ontology class whose prompt it answers; a detection naming a
 * prompt that was not sent breaks the contract and fails the path for that frame.
 */
export const OpenVocabAnswer = z.object({
  model: z.string().min(1),
  detections: z.array(
    z.object({
      prompt: z.string(),
      box: z.array(z.number()).length(4),
      score: z.number().min(0).max(1),
      polygons: z.array(z.array(z.number())).nullish(),
    }),
  ),
});

export interface OpenVocabPath {
  configured: boolean;
  detect(frame: DecodedFrame): Promise<PathRun>;
}

/** Frames are sent at most this large; answers are scaled back to the frame. */
const MAX_SIDE = 1280;

const clamp = (v: number, hi: number) => Math.min(hi, Math.max(0, v));

export function createOpenVocabPath(config: Pick<AppConfig, 'autolabel'>): OpenVocabPath {
  const {
    openVocabUrl: url,
    openVocabKey: key,
    openVocabPrompts,
    openVocabMinScore,
    endpointTimeoutSeconds,
  } = config.autolabel;
  if (!url) {
    const reason = 'open-vocabulary detector is not configured (set APP_AUTOLABEL__OPEN_VOCAB_URL)';
    return {
      configured: false,
      detect: () => Promise.resolve({ path: 'open_vocab', status: 'refused', reason }),
    };
  }
  const classByPrompt = new Map(openVocabPrompts.map((c) => [c.replace(/_/g, ' '), c]));
  return {
    configured: true,
    async detect(frame) {
      const jpeg = await frameJpeg(frame, MAX_SIDE);
      const scale = Math.min(1, MAX_SIDE / Math.max(frame.width, frame.height));
      const sent = { width: Math.round(frame.width * scale), height: Math.round(frame.height * scale) };
      try {
        const answer = await postJson(
          'open-vocabulary detector',
          url,
          {
            image: { mime: 'image/jpeg', data: jpeg.toString('base64') },
            ...sent,
            prompts: [...classByPrompt.keys()],
            min_score: openVocabMinScore,
          },
          { key, timeoutSeconds: endpointTimeoutSeconds, schema: OpenVocabAnswer },
        );
        const toX = (v: number) => clamp(v / scale, frame.width);
        const toY = (v: number) => clamp(v / scale, frame.height);
        const detections = answer.detections
          .filter((d) => d.score >= openVocabMinScore)
          .map((d) => {
            const className = classByPrompt.get(d.prompt);
            if (!className)
              throw new Error(
                `open-vocabulary detector answered prompt ${JSON.stringify(d.prompt)}, which was not asked`,
              );
            const [x1, y1, x2, y2] = d.box as Box;
            const box: Box = [toX(x1), toY(y1), toX(x2), toY(y2)];
            const mask =
              d.polygons
                ?.filter((r) => r.length >= 6 && r.length % 2 === 0)
                .map((r) => r.map((v, i) => (i % 2 ? toY(v) : toX(v)))) ?? [];
            return {
              box,
              className,
              score: d.score,
              label: d.prompt,
              mask: mask.length ? mask : null,
            };
          })
          .filter(({ box: [x1, y1, x2, y2] }) => x2 - x1 >= 1 && y2 - y1 >= 1);
        return { path: 'open_vocab', status: 'ran', detections, model: answer.model };
      } catch (err) {
        return { path: 'open_vocab', status: 'failed', reason: (err as Error).message };
      }
    },
  };
}
