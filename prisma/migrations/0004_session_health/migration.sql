-- Session health inputs written by ingest and read by the inspector (docs/session-health.md).
-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "target_fps" DOUBLE PRECISION,
ADD COLUMN     "duplicate_count" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "rejected_count" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "expected_sensors" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "present_sensors" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateTable
CREATE TABLE "session_health_overrides" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "quarantined" BOOLEAN NOT NULL,
    "reason" TEXT NOT NULL,
    "actor_id" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_health_overrides_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inspector_layouts" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "layout" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inspector_layouts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "sessions_created_at_id_idx" ON "sessions"("created_at", "id");

-- CreateIndex
CREATE INDEX "frames_session_id_timestamp_ms_idx" ON "frames"("session_id", "timestamp_ms");

-- CreateIndex
CREATE INDEX "session_health_overrides_session_id_created_at_idx" ON "session_health_overrides"("session_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "inspector_layouts_user_id_name_key" ON "inspector_layouts"("user_id", "name");

-- AddForeignKey
ALTER TABLE "session_health_overrides" ADD CONSTRAINT "session_health_overrides_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inspector_layouts" ADD CONSTRAINT "inspector_layouts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
