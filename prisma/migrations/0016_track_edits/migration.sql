-- AlterTable
ALTER TABLE "tracks" ADD COLUMN     "attrs" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable
CREATE TABLE "track_events" (
    "id" UUID NOT NULL,
    "track_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "start_frame" UUID,
    "end_frame" UUID,
    "attrs" JSONB NOT NULL DEFAULT '{}',
    "source" TEXT NOT NULL DEFAULT 'human',
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "track_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "track_events_track_id_idx" ON "track_events"("track_id");

-- AddForeignKey
ALTER TABLE "track_events" ADD CONSTRAINT "track_events_track_id_fkey" FOREIGN KEY ("track_id") REFERENCES "tracks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
