/** The assistant's memory: notes kept in the workspace (and shown by REST `GET /memory`). */
import { z } from 'zod';
import { CanlabInputError } from '../../errors';
import { guarded, type ToolFamily } from '../common';

export const memoryTools: ToolFamily = (server, workspace) => {
  server.registerTool(
    'read_memory',
    {
      title: 'Read memory',
      description: 'The assistant memory entries (key, value, time written), or the one under `key`.',
      inputSchema: z.strictObject({ key: z.string().min(1).optional() }),
      annotations: { readOnlyHint: true },
    },
    ({ key }) =>
      guarded(() => {
        const entries = workspace().memory();
        if (key === undefined) return { entries };
        const entry = entries.find((e) => e.key === key);
        if (!entry) throw new CanlabInputError('memory', `no entry under '${key}'`);
        return { entry };
      }),
  );

  server.registerTool(
    'write_memory',
    {
      title: 'Write memory',
      description:
        'Sets (or replaces) the memory entry under `key`: a note that outlives the conversation, e.g. what a signal was found to be.',
      inputSchema: z.strictObject({ key: z.string().min(1).max(200), value: z.string().max(100_000) }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    ({ key, value }) => guarded(() => ({ entry: workspace().remember(key, value) })),
  );
};
