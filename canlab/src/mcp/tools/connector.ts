/**
 * `search` and `fetch` in the shape connector clients expect: search answers one text item holding
 * JSON `{results: [{id, title, url}]}`, fetch one holding `{id, title, text, url, metadata}`.
 */
import { z } from 'zod';
import { CanlabInputError } from '../../errors';
import { guarded, type ToolFamily } from '../common';
import { searchRecords, searchWorkspace } from '../search';

/** Results `search` returns at most. */
export const SEARCH_LIMIT = 20;

export const connectorTools: ToolFamily = (server, workspace) => {
  server.registerTool(
    'search',
    {
      title: 'Search the workspace',
      description: `Searches ids, defined signals, detector findings, marks and memory for the query words; returns up to ${SEARCH_LIMIT} results (id, title, url), best first. fetch(id) returns the full record.`,
      inputSchema: z.strictObject({
        query: z.string().max(1000).describe('Words to look for, e.g. "counter 0x123" or "checksum"'),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ query }) =>
      guarded(() => ({
        results: searchWorkspace(workspace(), query, SEARCH_LIMIT).map(({ id, title, url }) => ({
          id,
          title,
          url,
        })),
      })),
  );

  server.registerTool(
    'fetch',
    {
      title: 'Fetch a record',
      description:
        'The full record for an id returned by search: id, title, text, url and metadata (the structured object).',
      inputSchema: z.strictObject({
        id: z.string().min(1).describe('A result id from search, e.g. "id:0x123" or "signal:0x123:Speed"'),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ id }) =>
      guarded(() => {
        const found = searchRecords(workspace()).find((r) => r.id === id);
        if (!found)
          throw new CanlabInputError('fetch', `no record '${id}'; search returns the ids that exist`);
        return { ...found };
      }),
  );
};
