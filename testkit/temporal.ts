import fs from 'node:fs';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { historyToJSON, type historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { localStackEnv } from './stack';

type ProtoHistory = Parameters<typeof historyToJSON>[0];

/**
 * A private Temporal dev server for one test file, on the CLI binary the stack script built
 * (`@temporalio/testing` would download one, which fails offline).
 */
export function startTemporalTestEnv(): Promise<TestWorkflowEnvironment> {
  // Worker state changes and bundler output are noise in test logs; warnings still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const path = localStackEnv().STACK_TEMPORAL_BIN!;
  if (!fs.existsSync(path)) throw new Error(`no Temporal CLI at ${path}; run infra/stack.sh install`);
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      extraArgs: [
        '--sqlite-pragma',
        'journal_mode=WAL',
        '--sqlite-pragma',
        'synchronous=OFF',
        '--log-level',
        'error',
      ],
    },
  });
}

type History = Parameters<typeof historyFromJSON>[0];

/** The activity types a workflow history scheduled, in order: its business steps as the Temporal UI shows them. */
export function scheduledActivities(history: ProtoHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

/**
 * Writes a fresh recording of a workflow's history, only when RECORD_HISTORIES=1: a recording
 * that is missing must fail the replay, not be quietly made anew (that would turn the test into a pass).
 */
export async function recordHistoryIfAsked(
  historyFile: string,
  fetch: () => Promise<ProtoHistory>,
): Promise<void> {
  if (process.env.RECORD_HISTORIES === '1') fs.writeFileSync(historyFile, historyToJSON(await fetch()));
}

/**
 * Replays a recorded workflow history against the current workflow code: a change that breaks
 * determinism makes this throw (DeterminismViolationError).
 */
export async function replayRecordedHistory(
  historyFile: string,
  workflowsPath: string,
  workflowId: string,
): Promise<void> {
  if (!fs.existsSync(historyFile))
    throw new Error(`no recorded history at ${historyFile}; record it with RECORD_HISTORIES=1 and commit it`);
  const history = JSON.parse(fs.readFileSync(historyFile, 'utf8')) as History;
  await Worker.runReplayHistory({ workflowsPath }, history, workflowId);
}
