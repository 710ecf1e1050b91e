import path from 'node:path';
import { replayRecordedHistory } from '../testkit/temporal';

/** A deleted recording must fail its replay test, not turn it into a pass by being recorded anew. */
it('fails the replay of a history that was never recorded, naming how to record it', async () => {
  await expect(
    replayRecordedHistory(
      path.join(__dirname, 'histories/missing.json'),
      require.resolve('../workflows'),
      'x',
    ),
  ).rejects.toThrow(/no recorded history at .*missing\.json; record it with RECORD_HISTORIES=1/);
});
