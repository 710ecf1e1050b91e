import { EVENT_CATALOGUE, eventKindInfo, type EventKindInfo } from './catalogue';
import { MAX_TITLE, namedRecipients, notificationTitle, onceEventId } from './notify';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const issue: EventKindInfo = eventKindInfo('label.issue')!;
const jobDone: EventKindInfo = eventKindInfo('job.completed')!;

describe('namedRecipients', () => {
  it('reads user ids and lists of them from the audience fields, each once, lower-cased', () => {
    expect(namedRecipients(issue, { annotators: [A, B, A.toUpperCase()] }, null).sort()).toEqual([A, B]);
    expect(namedRecipients(jobDone, { started_by: A }, null)).toEqual([A]);
  });

  it('leaves out the actor: nobody is told what they did themselves', () => {
    expect(namedRecipients(issue, { annotators: [A, B] }, B.toUpperCase())).toEqual([A]);
  });

  it('ignores fields outside the audience and values that are not user ids', () => {
    expect(namedRecipients(jobDone, { job_id: A, started_by: null }, null)).toEqual([]);
    expect(namedRecipients(issue, { annotators: ['admin', 7, { id: A }] }, null)).toEqual([]);
  });
});

describe('notificationTitle', () => {
  it('fills the template from the payload', () => {
    expect(notificationTitle(jobDone, { job_kind: 'ingest' })).toBe('Your ingest job finished');
  });

  it('keeps a placeholder whose field is missing or not text, and falls back to the description', () => {
    expect(notificationTitle(jobDone, { job_kind: { x: 1 } })).toBe('Your {job_kind} job finished');
    const plain: EventKindInfo = {
      kind: 'x.y',
      subject: 's',
      description: 'Something happened',
      payload: [],
    };
    expect(notificationTitle(plain, {})).toBe('Something happened');
  });

  it('cuts a long title', () => {
    const title = notificationTitle(jobDone, { job_kind: 'k'.repeat(500) });
    expect(title).toHaveLength(MAX_TITLE);
    expect(title.endsWith('…')).toBe(true);
  });
});

describe('onceEventId', () => {
  it('is a stable version-8 UUID of its parts, different for different parts', () => {
    const id = onceEventId('job.completed', 'ingest', A);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(onceEventId('job.completed', 'ingest', A)).toBe(id);
    expect(onceEventId('job.failed', 'ingest', A)).not.toBe(id);
    // Parts are kept apart: ('ab', 'c') is not ('a', 'bc').
    expect(onceEventId('ab', 'c')).not.toBe(onceEventId('a', 'bc'));
  });
});

describe('the catalogue', () => {
  it('names each kind once, and every audience field is a payload field', () => {
    const kinds = EVENT_CATALOGUE.map((e) => e.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const e of EVENT_CATALOGUE as readonly EventKindInfo[])
      for (const field of e.notifies?.users ?? []) expect(e.payload).toContain(field);
  });
});
