-- Ingest (docs/ingest.md): uploads, ingest jobs, rejected frames, extraction candidates, and the
-- session columns ingest fills.
-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "duration_ms" DOUBLE PRECISION,
ADD COLUMN     "source_meta" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "frame_count" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "workflow_id" TEXT;

-- CreateTable
CREATE TABLE "uploads" (
    "id" UUID NOT NULL,
    "object_key" TEXT NOT NULL,
    "multipart_id" TEXT,
    "filename" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "declared_size" BIGINT,
    "part_size" INTEGER NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'open',
    "size_bytes" BIGINT,
    "sha256" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(6),

    CONSTRAINT "uploads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ingest_jobs" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "source" JSONB NOT NULL,
    "options" JSONB NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'queued',
    "stage" TEXT NOT NULL DEFAULT 'queued',
    "frames_expected" INTEGER,
    "frames_extracted" INTEGER NOT NULL DEFAULT 0,
    "frames_rejected" INTEGER NOT NULL DEFAULT 0,
    "frames_duplicate" INTEGER NOT NULL DEFAULT 0,
    "frames_accepted" INTEGER NOT NULL DEFAULT 0,
    "frames_redacted" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "ingest_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rejected_frames" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "timestamp_ms" DOUBLE PRECISION NOT NULL,
    "reason" TEXT NOT NULL,
    "reasons" TEXT[],
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rejected_frames_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ingest_candidates" (
    "session_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "timestamp_ms" DOUBLE PRECISION NOT NULL,
    "width" INTEGER NOT NULL,
    "height" INTEGER NOT NULL,
    "phash" TEXT NOT NULL,
    "metrics" JSONB NOT NULL,
    "object_key" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "verdict" TEXT,

    CONSTRAINT "ingest_candidates_pkey" PRIMARY KEY ("session_id","seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "uploads_object_key_key" ON "uploads"("object_key");

-- CreateIndex
CREATE INDEX "uploads_state_created_at_idx" ON "uploads"("state", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "ingest_jobs_session_id_key" ON "ingest_jobs"("session_id");

-- CreateIndex
CREATE UNIQUE INDEX "ingest_jobs_workflow_id_key" ON "ingest_jobs"("workflow_id");

-- CreateIndex
CREATE INDEX "ingest_jobs_state_created_at_idx" ON "ingest_jobs"("state", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "rejected_frames_session_id_seq_key" ON "rejected_frames"("session_id", "seq");

-- AddForeignKey
ALTER TABLE "ingest_jobs" ADD CONSTRAINT "ingest_jobs_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rejected_frames" ADD CONSTRAINT "rejected_frames_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ingest_candidates" ADD CONSTRAINT "ingest_candidates_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
