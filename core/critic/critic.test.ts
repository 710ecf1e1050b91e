import {
  applyCritic,
  associate,
  criticiseFrame,
  defaultCamera,
  groundPoint,
  horizonRow,
  type CriticContext,
  type CriticFrame,
  type CriticObject,
} from '.';

const W = 1280;
const H = 720;
const cam = defaultCamera(W, H);
const obj = (
  key: string,
  className: string,
  l1: string,
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  trackKey?: string,
): CriticObject => ({ key, className, l1, box: [x1, y1, x2, y2], trackKey: trackKey ?? null });
const frame = (objects: CriticObject[], timestampMs = 0, egoSpeedMps: number | null = null): CriticFrame => ({
  timestampMs,
  width: W,
  height: H,
  objects,
  egoSpeedMps,
});
const ctx = (
  previous: CriticFrame | null = null,
  lidarPixels: CriticContext['lidarPixels'] = null,
): CriticContext => ({ camera: cam, cameraSource: 'default', previous, lidarPixels });

describe('critic', () => {
  it('records the checks it cannot run and why', () => {
    const v = criticiseFrame(frame([obj('a', 'car', 'vehicle', 600, 400, 700, 500)]), ctx()).get('a')!;
    expect(v.vetoes).toEqual([]);
    expect(v.ran).toEqual(['geometric', 'relationship']);
    expect(v.skipped.map((s) => s.check)).toEqual(['temporal', 'motion', 'cross_modal']);
    expect(v.skipped.find((s) => s.check === 'cross_modal')!.reason).toMatch(/no LiDAR/);
  });

  it('geometric: flags a grounded box whose bottom is above the horizon, not a traffic light', () => {
    expect(horizonRow(cam)).toBe(360);
    const v = criticiseFrame(
      frame([
        obj('car', 'car', 'vehicle', 600, 100, 700, 300),
        obj('tl', 'traffic_light', 'traffic_control', 600, 100, 620, 150),
        obj('near', 'car', 'vehicle', 600, 300, 700, 352),
      ]),
      ctx(),
    );
    expect(v.get('car')!.vetoes.map((x) => x.check)).toEqual(['geometric']);
    expect(v.get('tl')!.vetoes).toEqual([]);
    expect(v.get('near')!.vetoes).toEqual([]); // within the 2% tolerance
  });

  it('temporal: flags a class flip of the same object and a centroid jump along a track', () => {
    const prev = frame([
      obj('p1', 'car', 'vehicle', 100, 400, 300, 500),
      obj('p2', 'person', 'vru', 0, 400, 50, 600, 't9'),
    ]);
    const cur = frame(
      [
        obj('c1', 'truck', 'vehicle', 110, 400, 310, 500),
        obj('c2', 'person', 'vru', 1200, 400, 1250, 700, 't9'),
      ],
      333,
    );
    const v = criticiseFrame(cur, ctx(prev));
    expect(v.get('c1')!.vetoes[0]).toMatchObject({
      check: 'temporal',
      reason: expect.stringMatching(/car to truck/),
    });
    expect(v.get('c2')!.vetoes[0]).toMatchObject({
      check: 'temporal',
      reason: expect.stringMatching(/beyond 0.6 of the frame diagonal/),
    });
  });

  it('motion: 45 km/h for vulnerable road users, 220 otherwise, using ego speed', () => {
    const ego = 10; // m/s
    // A pedestrian standing still: as the ego moves 10 m/s for 1 s it comes closer by 10 m.
    const zNear = (z: number) => 360 + (cam.heightM * cam.fy) / z;
    const standing = [
      obj('p', 'person', 'vru', 600, 300, 640, zNear(30)),
      obj('q', 'person', 'vru', 600, 300, 640, zNear(20)),
    ];
    const still = criticiseFrame(frame([standing[1]!], 1000, ego), ctx(frame([standing[0]!], 0, ego)));
    expect(still.get('q')!.ran).toContain('motion');
    expect(still.get('q')!.vetoes).toEqual([]);
    // The same apparent approach with the ego standing: 10 m/s = 36 km/h, fine; in 0.5 s, 72 km/h is not.
    const fast = criticiseFrame(frame([standing[1]!], 500, 0), ctx(frame([standing[0]!], 0, 0)));
    expect(fast.get('q')!.vetoes[0]).toMatchObject({ check: 'motion', detail: { limit_kmh: 45 } });
    // A car at 72 km/h is fine.
    const car = criticiseFrame(
      frame([{ ...standing[1]!, key: 'c', className: 'car', l1: 'vehicle' }], 500, 0),
      ctx(frame([{ ...standing[0]!, key: 'c0', className: 'car', l1: 'vehicle' }], 0, 0)),
    );
    expect(car.get('c')!.vetoes).toEqual([]);
    expect(groundPoint([0, 0, 10, 300], cam)).toBeNull();
  });

  it('motion is skipped without ego speed', () => {
    const v = criticiseFrame(
      frame([obj('a', 'car', 'vehicle', 0, 400, 10, 500)], 333),
      ctx(frame([obj('b', 'car', 'vehicle', 0, 400, 10, 500)])),
    );
    expect(v.get('a')!.skipped).toContainEqual({
      check: 'motion',
      reason: expect.stringMatching(/no ego speed/),
    });
  });

  it('cross_modal: needs 3 LiDAR points in the box', () => {
    const lidar: Array<[number, number]> = [
      [610, 410],
      [620, 420],
      [630, 430],
      [10, 10],
    ];
    const v = criticiseFrame(
      frame([obj('a', 'car', 'vehicle', 600, 400, 700, 500), obj('b', 'car', 'vehicle', 0, 400, 100, 500)]),
      ctx(null, lidar),
    );
    expect(v.get('a')!.vetoes).toEqual([]);
    expect(v.get('b')!.vetoes[0]).toMatchObject({ check: 'cross_modal', detail: { points: 0 } });
  });

  it('relationship: a rider needs a two-wheeler under its lower half', () => {
    const rider = obj('r', 'motorcyclist', 'vru', 500, 300, 560, 500);
    const alone = criticiseFrame(
      frame([rider, obj('m', 'motorcycle', 'two_wheeler', 800, 420, 900, 520)]),
      ctx(),
    );
    expect(alone.get('r')!.vetoes[0]!.check).toBe('relationship');
    const riding = criticiseFrame(
      frame([rider, obj('m', 'motorcycle', 'two_wheeler', 490, 400, 580, 520)]),
      ctx(),
    );
    expect(riding.get('r')!.vetoes).toEqual([]);
  });

  it('demotes auto_accept to review and never creates an auto_accept', () => {
    const veto = { vetoes: [{ check: 'geometric' as const, reason: 'x' }], ran: [], skipped: [] };
    const clean = { vetoes: [], ran: [], skipped: [] };
    expect(applyCritic('auto_accept', veto)).toEqual({ route: 'review', demoted: true });
    expect(applyCritic('auto_accept', clean)).toEqual({ route: 'auto_accept', demoted: false });
    for (const r of ['review', 'annotate'] as const) {
      expect(applyCritic(r, veto).route).toBe(r);
      expect(applyCritic(r, clean).route).toBe(r);
    }
  });

  it('associates by track first, then by the best overlap', () => {
    const m = associate(
      [obj('p1', 'car', 'vehicle', 0, 0, 100, 100), obj('p2', 'car', 'vehicle', 90, 0, 190, 100)],
      [obj('c1', 'car', 'vehicle', 85, 0, 185, 100)],
    );
    expect(m.get('c1')!.key).toBe('p2');
  });
});
