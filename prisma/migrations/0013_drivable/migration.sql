-- CreateTable
CREATE TABLE "drivable_areas" (
    "frame_id" UUID NOT NULL,
    "polygons" JSONB NOT NULL,
    "holes" JSONB NOT NULL DEFAULT '[]',
    "candidates" JSONB NOT NULL DEFAULT '[]',
    "source" TEXT NOT NULL,
    "model_version" TEXT,
    "stats" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 1,
    "run_id" UUID,
    "updated_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "drivable_areas_pkey" PRIMARY KEY ("frame_id")
);

-- CreateIndex
CREATE INDEX "drivable_areas_run_id_idx" ON "drivable_areas"("run_id");

-- AddForeignKey
ALTER TABLE "drivable_areas" ADD CONSTRAINT "drivable_areas_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;
