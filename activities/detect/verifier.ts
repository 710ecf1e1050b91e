import { z } from 'zod';
import type { AppConfig } from '../../core/config';
import { VERIFIER_VERDICTS, type VerifierAnswer } from '../../core/fusion';
import type { Box } from '../../core/geometry';
import { postJson } from './endpoint';
import { cropJpeg, type DecodedFrame } from './frame-image';

/**
 * The vision-language verifier: an OpenAI-compatible chat-completions API with image input
 * (APP_AUTOLABEL__VERIFIER_URL, __MODEL, __KEY). It is asked only about the uncertain subset of a
 * frame, in one request: one crop per object, each introduced by its id and the fused class and
 * confidence, and it answers a JSON object of verdicts (docs/autolabel.md). An object it does not
 * answer about keeps the detectors' view; an answer naming a class outside the ontology counts as
 * no answer.
 */
export interface VerifierCandidate {
  id: string;
  box: Box;
  className: string;
  conf: number;
}

export type VerifierOutcome =
  | {
      status: 'ran';
      model: string;
      answers: Map<string, VerifierAnswer>;
      asked: string[];
      unanswered: string[];
    }
  | { status: 'refused' | 'failed'; reason: string; asked: string[] };

export interface VerifierPath {
  configured: boolean;
  verify(
    frame: DecodedFrame,
    candidates: readonly VerifierCandidate[],
    classes: ReadonlySet<string>,
  ): Promise<VerifierOutcome>;
}

const ChatAnswer = z.object({
  model: z.string().optional(),
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

const Verdicts = z.object({
  verdicts: z.array(
    z.object({
      id: z.string(),
      verdict: z.enum(VERIFIER_VERDICTS),
      class_name: z.string().nullish(),
      confidence: z.number().min(0).max(1),
      rationale: z.string().nullish(),
    }),
  ),
});

const INSTRUCTIONS = [
  'You verify object detections on frames from a vehicle camera.',
  'For each object you get its id, the class the detectors proposed and their confidence, then a crop of the frame around it.',
  'Answer with one JSON object: {"verdicts": [{"id": "...", "verdict": "confirm" | "reject" | "relabel", "class_name": "...", "confidence": 0..1, "rationale": "..."}]}.',
  '"confirm": the crop shows that class. "reject": no such object is there. "relabel": it is an object of another class, named in class_name, which must be one of the allowed classes.',
].join(' ');

const CROP_PAD = 0.15;
const CROP_SIDE = 384;

export function chatCompletionsUrl(url: string): string {
  const base = url.replace(/\/+$/, '');
  return base.endsWith('/chat/completions') ? base : `${base}/chat/completions`;
}

/** The model's text may wrap the JSON in a Markdown fence; anything else is a broken answer. */
function parseVerdicts(content: string) {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(content);
  return Verdicts.parse(JSON.parse(fenced ? fenced[1]! : content));
}

export function createVerifierPath(config: Pick<AppConfig, 'autolabel'>): VerifierPath {
  const {
    verifierUrl: url,
    verifierModel: model,
    verifierKey: key,
    endpointTimeoutSeconds,
  } = config.autolabel;
  if (!url || !model) {
    const reason = `vision-language verifier is not configured (set ${[!url && 'APP_AUTOLABEL__VERIFIER_URL', !model && 'APP_AUTOLABEL__VERIFIER_MODEL'].filter(Boolean).join(' and ')})`;
    return {
      configured: false,
      verify: (_f, candidates) =>
        Promise.resolve({ status: 'refused', reason, asked: candidates.map((c) => c.id) }),
    };
  }
  const endpoint = chatCompletionsUrl(url);
  return {
    configured: true,
    async verify(frame, candidates, classes) {
      const asked = candidates.map((c) => c.id);
      const content: unknown[] = [
        {
          type: 'text',
          text: `Allowed classes: ${[...classes].sort().join(', ')}. ${candidates.length} object(s) follow.`,
        },
      ];
      for (const c of candidates) {
        const crop = await cropJpeg(frame, c.box, CROP_PAD, CROP_SIDE);
        content.push({
          type: 'text',
          text: `Object ${c.id}: proposed class "${c.className}", confidence ${c.conf.toFixed(3)}.`,
        });
        content.push({
          type: 'image_url',
          image_url: { url: `data:image/jpeg;base64,${crop.toString('base64')}` },
        });
      }
      try {
        const chat = await postJson(
          'vision-language verifier',
          endpoint,
          {
            model,
            temperature: 0,
            response_format: { type: 'json_object' },
            messages: [
              { role: 'system', content: INSTRUCTIONS },
              { role: 'user', content },
            ],
          },
          { key, timeoutSeconds: endpointTimeoutSeconds, schema: ChatAnswer },
        );
        let parsed: z.infer<typeof Verdicts>;
        try {
          parsed = parseVerdicts(chat.choices[0]!.message.content);
        } catch (err) {
          throw new Error(
            `vision-language verifier at ${endpoint} answered verdicts outside the contract: ${(err as Error).message.slice(0, 200)}`,
            { cause: err },
          );
        }
        const answers = new Map<string, VerifierAnswer>();
        for (const v of parsed.verdicts) {
          if (!asked.includes(v.id)) continue;
          const className = v.class_name ?? null;
          if (v.verdict === 'relabel' && (!className || !classes.has(className))) continue;
          answers.set(v.id, {
            verdict: v.verdict,
            className,
            confidence: v.confidence,
            rationale: v.rationale ?? null,
          });
        }
        return {
          status: 'ran',
          model: chat.model ?? model,
          answers,
          asked,
          unanswered: asked.filter((id) => !answers.has(id)),
        };
      } catch (err) {
        return { status: 'failed', reason: (err as Error).message, asked };
      }
    },
  };
}
