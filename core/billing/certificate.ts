import { roundUsd } from '../govern/cost';

/**
 * A dataset commit's cost certificate (POST /api/billing/certify/{commit_id}, docs/billing.md):
 * compute is the GPU time of the auto-label jobs that made the commit's labels, from their real
 * start and finish, at the local GPU price; labelling is the human review time spent on those
 * labels at the labelling rate. Its canonical JSON is what the dataset-certificate key signs.
 */

export interface ComputeJob {
  job_id: string;
  session_id: string;
  started_at: string;
  finished_at: string;
}

export interface CostCertificateBody {
  kind: 'drivelab.cost-certificate/v1';
  commit_id: string;
  name: string;
  version: number;
  compute: {
    gpu_hourly_usd: number;
    gpu_hours: number;
    usd: number;
    jobs: Array<ComputeJob & { gpu_hours: number; usd: number }>;
  };
  labelling: { hourly_usd: number; reviews: number; hours: number; usd: number };
  total_usd: number;
  certified_by: { user_id: string | null; email: string | null };
  certified_at: string;
  key_id: string;
}

const hoursBetween = (from: string, to: string) => Math.max(0, Date.parse(to) - Date.parse(from)) / 3_600_000;

export function costCertificateBody(input: {
  commit: { commit_id: string; name: string; version: number };
  jobs: readonly ComputeJob[];
  gpuHourlyUsd: number;
  reviews: number;
  reviewMs: number;
  labelHourlyUsd: number;
  certifiedBy: CostCertificateBody['certified_by'];
  certifiedAt: string;
  keyId: string;
}): CostCertificateBody {
  const jobs = input.jobs.map((j) => {
    const gpu_hours = roundUsd(hoursBetween(j.started_at, j.finished_at));
    return { ...j, gpu_hours, usd: roundUsd(gpu_hours * input.gpuHourlyUsd) };
  });
  const gpuHours = roundUsd(jobs.reduce((s, j) => s + j.gpu_hours, 0));
  const computeUsd = roundUsd(jobs.reduce((s, j) => s + j.usd, 0));
  const labelHours = roundUsd(input.reviewMs / 3_600_000);
  const labelUsd = roundUsd(labelHours * input.labelHourlyUsd);
  return {
    kind: 'drivelab.cost-certificate/v1',
    ...input.commit,
    compute: { gpu_hourly_usd: input.gpuHourlyUsd, gpu_hours: gpuHours, usd: computeUsd, jobs },
    labelling: { hourly_usd: input.labelHourlyUsd, reviews: input.reviews, hours: labelHours, usd: labelUsd },
    total_usd: roundUsd(computeUsd + labelUsd),
    certified_by: input.certifiedBy,
    certified_at: input.certifiedAt,
    key_id: input.keyId,
  };
}
