-- DropIndex
DROP INDEX "objects_frame_id_idx";

-- CreateTable
CREATE TABLE "slices" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "predicate" JSONB NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "export_jobs" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "slice_id" UUID,
    "predicate" JSONB NOT NULL,
    "formats" TEXT[],
    "include_images" BOOLEAN NOT NULL DEFAULT true,
    "split" JSONB NOT NULL,
    "gate_mode" TEXT NOT NULL,
    "gate" JSONB NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'queued',
    "cursor" JSONB,
    "progress" JSONB NOT NULL DEFAULT '{}',
    "commit_id" TEXT,
    "error" TEXT,
    "workflow_id" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "export_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dataset_commits" (
    "commit_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "job_id" UUID NOT NULL,
    "parent_id" TEXT,
    "prefix" TEXT NOT NULL,
    "files" JSONB NOT NULL,
    "counts" JSONB NOT NULL DEFAULT '{}',
    "gate" JSONB NOT NULL DEFAULT '{}',
    "predicate" JSONB NOT NULL,
    "formats" TEXT[],
    "split" JSONB NOT NULL,
    "session_ids" UUID[],
    "model_versions" TEXT[],
    "certificate" JSONB NOT NULL,
    "signature" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "shards" JSONB NOT NULL DEFAULT '[]',
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dataset_commits_pkey" PRIMARY KEY ("commit_id")
);

-- CreateTable
CREATE TABLE "frame_embeddings" (
    "frame_id" UUID NOT NULL,
    "model" TEXT NOT NULL,
    "vector" REAL[],
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "frame_embeddings_pkey" PRIMARY KEY ("frame_id")
);

-- CreateTable
CREATE TABLE "lake_tables" (
    "name" TEXT NOT NULL,
    "commit_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "rows" INTEGER NOT NULL,
    "published_by" UUID,
    "published_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lake_tables_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "slices_created_at_idx" ON "slices"("created_at");

-- CreateIndex
CREATE INDEX "export_jobs_state_created_at_idx" ON "export_jobs"("state", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "dataset_commits_job_id_key" ON "dataset_commits"("job_id");

-- CreateIndex
CREATE INDEX "dataset_commits_session_ids_idx" ON "dataset_commits" USING GIN ("session_ids");

-- CreateIndex
CREATE INDEX "dataset_commits_created_at_idx" ON "dataset_commits"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "dataset_commits_name_version_key" ON "dataset_commits"("name", "version");

-- CreateIndex
CREATE INDEX "frame_embeddings_model_idx" ON "frame_embeddings"("model");

-- CreateIndex
CREATE INDEX "objects_frame_id_id_idx" ON "objects"("frame_id", "id");

-- AddForeignKey
ALTER TABLE "export_jobs" ADD CONSTRAINT "export_jobs_slice_id_fkey" FOREIGN KEY ("slice_id") REFERENCES "slices"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "frame_embeddings" ADD CONSTRAINT "frame_embeddings_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;
