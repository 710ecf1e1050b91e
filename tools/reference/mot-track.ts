/**
 * Runs our tracker (core/tracking, default settings) on the detections derived from the TUD-Campus
 * ground truth and writes its tracks as core/metrics/mot/fixtures/tud-campus.bytetrack.json, the
 * hypothesis tools/reference/mot_reference.py then scores with py-motmetrics and TrackEval.
 *
 *     npx tsx tools/reference/mot-track.ts
 *
 * mot_reference.py --generate runs it after writing the detections.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { trackDetectionFixture } from '../../core/metrics/mot/fixtures/detections';
import { TRACKER_VERSION } from '../../core/tracking';

const out = path.resolve(__dirname, '../../core/metrics/mot/fixtures/tud-campus.bytetrack.json');
fs.writeFileSync(
  out,
  JSON.stringify({
    source: `core/tracking ${TRACKER_VERSION} (default settings) on tud-campus.detections.json`,
    boxes: trackDetectionFixture(),
  }),
);
execFileSync('npx', ['prettier', '--write', '--log-level', 'warn', out], { stdio: 'inherit' });
