-- CreateTable
CREATE TABLE "ego_streams" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "message_type" TEXT NOT NULL,
    "t_ms" DOUBLE PRECISION[],
    "channels" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ego_streams_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "timeline_events" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "t_start_ms" DOUBLE PRECISION NOT NULL,
    "t_end_ms" DOUBLE PRECISION,
    "source" TEXT NOT NULL DEFAULT 'human',
    "label" TEXT,
    "attrs" JSONB NOT NULL DEFAULT '{}',
    "driving_event_id" UUID,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "timeline_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "driving_events" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "t_start_ms" DOUBLE PRECISION NOT NULL,
    "t_end_ms" DOUBLE PRECISION NOT NULL,
    "start_frame" UUID,
    "end_frame" UUID,
    "state" TEXT NOT NULL DEFAULT 'proposed',
    "source" TEXT NOT NULL DEFAULT 'derived',
    "track_ids" UUID[] DEFAULT ARRAY[]::UUID[],
    "classes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "confidence" DOUBLE PRECISION,
    "evidence" JSONB NOT NULL DEFAULT '{}',
    "deriver_version" TEXT,
    "reviewed_by" UUID,
    "reviewed_at" TIMESTAMPTZ(6),
    "review_note" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "driving_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "lanes" (
    "id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "points" JSONB NOT NULL,
    "lane_type" TEXT NOT NULL DEFAULT 'unknown',
    "source" TEXT NOT NULL DEFAULT 'human',
    "conf" DOUBLE PRECISION,
    "lane_group_id" UUID,
    "attrs" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lanes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "object_dynamics" (
    "object_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "track_id" UUID NOT NULL,
    "speed_px_s" DOUBLE PRECISION NOT NULL,
    "accel_px_s2" DOUBLE PRECISION,
    "heading_deg" DOUBLE PRECISION,
    "speed_mps" DOUBLE PRECISION,
    "accel_mps2" DOUBLE PRECISION,
    "range_m" DOUBLE PRECISION,
    "metric" BOOLEAN NOT NULL DEFAULT false,
    "computed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "object_dynamics_pkey" PRIMARY KEY ("object_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ego_streams_session_id_kind_topic_key" ON "ego_streams"("session_id", "kind", "topic");

-- CreateIndex
CREATE INDEX "timeline_events_session_id_t_start_ms_idx" ON "timeline_events"("session_id", "t_start_ms");

-- CreateIndex
CREATE INDEX "driving_events_session_id_t_start_ms_idx" ON "driving_events"("session_id", "t_start_ms");

-- CreateIndex
CREATE INDEX "driving_events_kind_t_start_ms_idx" ON "driving_events"("kind", "t_start_ms");

-- CreateIndex
CREATE INDEX "lanes_frame_id_idx" ON "lanes"("frame_id");

-- CreateIndex
CREATE INDEX "lanes_session_id_lane_group_id_idx" ON "lanes"("session_id", "lane_group_id");

-- CreateIndex
CREATE INDEX "object_dynamics_frame_id_idx" ON "object_dynamics"("frame_id");

-- CreateIndex
CREATE INDEX "object_dynamics_track_id_idx" ON "object_dynamics"("track_id");

-- AddForeignKey
ALTER TABLE "ego_streams" ADD CONSTRAINT "ego_streams_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "timeline_events" ADD CONSTRAINT "timeline_events_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "timeline_events" ADD CONSTRAINT "timeline_events_driving_event_id_fkey" FOREIGN KEY ("driving_event_id") REFERENCES "driving_events"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "driving_events" ADD CONSTRAINT "driving_events_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lanes" ADD CONSTRAINT "lanes_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lanes" ADD CONSTRAINT "lanes_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "object_dynamics" ADD CONSTRAINT "object_dynamics_object_id_fkey" FOREIGN KEY ("object_id") REFERENCES "objects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
