-- CreateTable
CREATE TABLE "object_quality" (
    "object_id" UUID NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "calibrated_conf" DOUBLE PRECISION,
    "calibration_id" UUID,
    "evidence" JSONB NOT NULL DEFAULT '{}',
    "computed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "object_quality_pkey" PRIMARY KEY ("object_id")
);

-- CreateIndex
CREATE INDEX "object_quality_score_idx" ON "object_quality"("score");

-- AddForeignKey
ALTER TABLE "object_quality" ADD CONSTRAINT "object_quality_object_id_fkey" FOREIGN KEY ("object_id") REFERENCES "objects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
