import { costCertificateBody } from './certificate';

describe('costCertificateBody', () => {
  it('prices each job by its real duration and the review time by the labelling rate', () => {
    const body = costCertificateBody({
      commit: { commit_id: 'c', name: 'set', version: 2 },
      jobs: [
        {
          job_id: 'a',
          session_id: 's',
          started_at: '2024-01-01T00:00:00Z',
          finished_at: '2024-01-01T00:30:00Z',
        },
        {
          job_id: 'b',
          session_id: 's',
          started_at: '2024-01-01T01:00:00Z',
          finished_at: '2024-01-01T01:06:00Z',
        },
      ],
      gpuHourlyUsd: 4,
      reviews: 3,
      reviewMs: 90 * 60_000,
      labelHourlyUsd: 20,
      certifiedBy: { user_id: null, email: null },
      certifiedAt: '2024-02-01T00:00:00Z',
      keyId: 'k',
    });
    expect(body.compute.jobs.map((j) => [j.gpu_hours, j.usd])).toEqual([
      [0.5, 2],
      [0.1, 0.4],
    ]);
    expect(body.compute).toMatchObject({ gpu_hours: 0.6, usd: 2.4 });
    expect(body.labelling).toEqual({ hourly_usd: 20, reviews: 3, hours: 1.5, usd: 30 });
    expect(body.total_usd).toBe(32.4);
  });
});
