-- CreateTable
CREATE TABLE "active_learning_batches" (
    "id" UUID NOT NULL,
    "request" JSONB NOT NULL,
    "weights" JSONB NOT NULL,
    "threshold" DOUBLE PRECISION NOT NULL,
    "candidates" INTEGER NOT NULL,
    "unembedded" INTEGER NOT NULL,
    "route_to_review" BOOLEAN NOT NULL,
    "routed_objects" INTEGER NOT NULL DEFAULT 0,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "active_learning_batches_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "active_learning_batch_frames" (
    "batch_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "rank" INTEGER NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "parts" JSONB NOT NULL,
    "object_ids" UUID[],

    CONSTRAINT "active_learning_batch_frames_pkey" PRIMARY KEY ("batch_id","frame_id")
);

-- CreateTable
CREATE TABLE "active_learning_retrains" (
    "id" UUID NOT NULL,
    "training_job_id" UUID NOT NULL,
    "dataset_commit_id" TEXT NOT NULL,
    "labelled_frames" INTEGER NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "active_learning_retrains_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "active_learning_batches_created_at_idx" ON "active_learning_batches"("created_at");

-- CreateIndex
CREATE INDEX "active_learning_batch_frames_frame_id_idx" ON "active_learning_batch_frames"("frame_id");

-- CreateIndex
CREATE UNIQUE INDEX "active_learning_retrains_training_job_id_key" ON "active_learning_retrains"("training_job_id");

-- CreateIndex
CREATE INDEX "active_learning_retrains_created_at_idx" ON "active_learning_retrains"("created_at");

-- AddForeignKey
ALTER TABLE "active_learning_batch_frames" ADD CONSTRAINT "active_learning_batch_frames_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "active_learning_batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "active_learning_batch_frames" ADD CONSTRAINT "active_learning_batch_frames_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "active_learning_retrains" ADD CONSTRAINT "active_learning_retrains_training_job_id_fkey" FOREIGN KEY ("training_job_id") REFERENCES "training_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
