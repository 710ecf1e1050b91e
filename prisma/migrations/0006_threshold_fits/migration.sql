-- CreateTable
CREATE TABLE "threshold_fits" (
    "id" UUID NOT NULL,
    "target_precision" DOUBLE PRECISION NOT NULL,
    "min_samples" INTEGER NOT NULL,
    "session_ids" UUID[] DEFAULT ARRAY[]::UUID[],
    "evidence" JSONB NOT NULL DEFAULT '{}',
    "global" JSONB NOT NULL,
    "classes" JSONB NOT NULL DEFAULT '{}',
    "active" BOOLEAN NOT NULL DEFAULT false,
    "activated_at" TIMESTAMPTZ(6),
    "activated_by" UUID,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "threshold_fits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "threshold_fits_created_at_idx" ON "threshold_fits"("created_at");
