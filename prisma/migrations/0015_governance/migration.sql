-- AlterTable
ALTER TABLE "dataset_commits" ADD COLUMN     "erased_session_ids" UUID[] DEFAULT ARRAY[]::UUID[];

-- CreateTable
CREATE TABLE "governance_state" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "killswitch_engaged" BOOLEAN NOT NULL DEFAULT false,
    "reason" TEXT,
    "engaged_by" UUID,
    "engaged_at" TIMESTAMPTZ(6),
    "released_by" UUID,
    "released_at" TIMESTAMPTZ(6),
    "stopped" JSONB NOT NULL DEFAULT '[]',
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "governance_state_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "spend_records" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "basis" TEXT NOT NULL,
    "gpu_hours" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "hourly_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "usd" DOUBLE PRECISION NOT NULL,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "started_at" TIMESTAMPTZ(6),
    "ended_at" TIMESTAMPTZ(6),
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spend_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cost_certificates" (
    "id" UUID NOT NULL,
    "commit_id" TEXT NOT NULL,
    "total_usd" DOUBLE PRECISION NOT NULL,
    "body" JSONB NOT NULL,
    "signature" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cost_certificates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "erasures" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "session_name" TEXT,
    "reason" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "workflow_id" TEXT,
    "deleted" JSONB NOT NULL DEFAULT '{}',
    "proof" JSONB,
    "commit_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "error" TEXT,
    "requested_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "erasures_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "governance_runs" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "dry_run" BOOLEAN NOT NULL DEFAULT false,
    "params" JSONB NOT NULL DEFAULT '{}',
    "result" JSONB NOT NULL DEFAULT '{}',
    "workflow_id" TEXT,
    "error" TEXT,
    "requested_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "governance_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "drift_findings" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "feature" TEXT NOT NULL,
    "test" TEXT NOT NULL,
    "statistic" DOUBLE PRECISION NOT NULL,
    "p_value" DOUBLE PRECISION NOT NULL,
    "threshold" DOUBLE PRECISION NOT NULL,
    "drifted" BOOLEAN NOT NULL,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "drift_findings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "slos" (
    "id" UUID NOT NULL,
    "route_group" TEXT NOT NULL,
    "latency_ms" DOUBLE PRECISION NOT NULL,
    "latency_target" DOUBLE PRECISION NOT NULL,
    "error_rate_target" DOUBLE PRECISION NOT NULL,
    "window_minutes" INTEGER NOT NULL DEFAULT 43200,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slos_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "spend_records_created_at_idx" ON "spend_records"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "spend_records_kind_subject_id_basis_key" ON "spend_records"("kind", "subject_id", "basis");

-- CreateIndex
CREATE INDEX "cost_certificates_commit_id_created_at_idx" ON "cost_certificates"("commit_id", "created_at");

-- CreateIndex
CREATE INDEX "erasures_session_id_idx" ON "erasures"("session_id");

-- CreateIndex
CREATE INDEX "erasures_created_at_idx" ON "erasures"("created_at");

-- CreateIndex
CREATE INDEX "governance_runs_kind_created_at_idx" ON "governance_runs"("kind", "created_at");

-- CreateIndex
CREATE INDEX "drift_findings_run_id_idx" ON "drift_findings"("run_id");

-- CreateIndex
CREATE UNIQUE INDEX "slos_route_group_key" ON "slos"("route_group");

-- AddForeignKey
ALTER TABLE "drift_findings" ADD CONSTRAINT "drift_findings_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "governance_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
