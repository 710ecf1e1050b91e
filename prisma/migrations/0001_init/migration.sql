-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('annotator', 'reviewer', 'admin');

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" "Role" NOT NULL DEFAULT 'annotator',
    "password_hash" TEXT,
    "token_version" INTEGER NOT NULL DEFAULT 0,
    "mfa_enabled" BOOLEAN NOT NULL DEFAULT false,
    "mfa_secret" TEXT,
    "disabled_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL,
    "project_id" TEXT,
    "name" TEXT NOT NULL,
    "vehicle_id" TEXT,
    "source_kind" TEXT NOT NULL,
    "source_uri" TEXT,
    "content_hash" TEXT,
    "state" TEXT NOT NULL DEFAULT 'created',
    "consent_status" TEXT NOT NULL DEFAULT 'unknown',
    "legal_basis" TEXT,
    "retention_until" TIMESTAMPTZ(6),
    "quarantined" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session_health" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "indexer_version" TEXT NOT NULL,
    "passed" BOOLEAN NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "checks" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_health_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "frames" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "index" INTEGER NOT NULL,
    "timestamp_ms" DOUBLE PRECISION NOT NULL,
    "width" INTEGER NOT NULL,
    "height" INTEGER NOT NULL,
    "uri" TEXT NOT NULL,
    "redacted_uri" TEXT,
    "phash" TEXT,
    "context" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "frames_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tracks" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "trajectory" JSONB NOT NULL DEFAULT '[]',
    "id_switch_flags" JSONB NOT NULL DEFAULT '[]',
    "tracker_version" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tracks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "objects" (
    "id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "bbox" DOUBLE PRECISION[],
    "rot_deg" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "class_id" INTEGER NOT NULL,
    "conf" DOUBLE PRECISION,
    "attrs" JSONB NOT NULL DEFAULT '{}',
    "mask_uri" TEXT,
    "polyline" JSONB,
    "cuboid_3d" JSONB,
    "keypoints" JSONB,
    "source" VARCHAR(16) NOT NULL,
    "state" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "track_id" UUID,
    "idem_key" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "objects_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reviews" (
    "id" UUID NOT NULL,
    "object_id" UUID NOT NULL,
    "reviewer_id" UUID,
    "reviewer" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "before" JSONB NOT NULL,
    "after" JSONB NOT NULL,
    "batch_id" UUID,
    "time_spent_ms" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reviews_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provenance" (
    "id" UUID NOT NULL,
    "object_id" UUID NOT NULL,
    "paths" JSONB NOT NULL DEFAULT '[]',
    "raw_confidences" JSONB NOT NULL DEFAULT '{}',
    "agreement" DOUBLE PRECISION,
    "entropy" DOUBLE PRECISION,
    "quality_flags" JSONB NOT NULL DEFAULT '[]',
    "reasoner_trace" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provenance_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pii_audits" (
    "id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "n_faces" INTEGER NOT NULL,
    "n_plates" INTEGER NOT NULL DEFAULT 0,
    "regions" JSONB NOT NULL DEFAULT '[]',
    "examined" BOOLEAN NOT NULL DEFAULT true,
    "model_versions" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pii_audits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "control_samples" (
    "id" UUID NOT NULL,
    "object_id" UUID NOT NULL,
    "session_id" UUID,
    "seed" INTEGER NOT NULL,
    "verdict" TEXT,
    "reviewer_id" UUID,
    "verdict_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "control_samples_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkpoints" (
    "id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "note" TEXT,
    "snapshot" JSONB NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "gold_sets" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "object_ids" TEXT[],
    "sealed_at" TIMESTAMPTZ(6),
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "gold_sets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inference_runs" (
    "id" UUID NOT NULL,
    "model_version" TEXT NOT NULL,
    "session_id" UUID,
    "reconstructed" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL DEFAULT 'created',
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inference_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_runs" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "changes" JSONB NOT NULL DEFAULT '[]',
    "created_by" UUID,
    "reverted_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ontology_classes" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "l0" TEXT NOT NULL,
    "l1" TEXT NOT NULL,
    "india" BOOLEAN NOT NULL DEFAULT false,
    "parent_id" INTEGER,
    "retired_at" TIMESTAMPTZ(6),

    CONSTRAINT "ontology_classes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "actor_id" UUID,
    "action" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "subject_id" TEXT,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notifications" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "body" JSONB NOT NULL DEFAULT '{}',
    "read_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rate_limit_buckets" (
    "key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(6) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("key","window_start")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_content_hash_key" ON "sessions"("content_hash");

-- CreateIndex
CREATE INDEX "sessions_project_id_idx" ON "sessions"("project_id");

-- CreateIndex
CREATE INDEX "session_health_session_id_indexer_version_created_at_idx" ON "session_health"("session_id", "indexer_version", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "frames_session_id_index_key" ON "frames"("session_id", "index");

-- CreateIndex
CREATE INDEX "tracks_session_id_idx" ON "tracks"("session_id");

-- CreateIndex
CREATE UNIQUE INDEX "objects_idem_key_key" ON "objects"("idem_key");

-- CreateIndex
CREATE INDEX "objects_frame_id_idx" ON "objects"("frame_id");

-- CreateIndex
CREATE INDEX "objects_track_id_idx" ON "objects"("track_id");

-- CreateIndex
CREATE INDEX "objects_state_class_id_idx" ON "objects"("state", "class_id");

-- CreateIndex
CREATE INDEX "reviews_object_id_created_at_idx" ON "reviews"("object_id", "created_at");

-- CreateIndex
CREATE INDEX "reviews_batch_id_idx" ON "reviews"("batch_id");

-- CreateIndex
CREATE INDEX "provenance_object_id_idx" ON "provenance"("object_id");

-- CreateIndex
CREATE UNIQUE INDEX "pii_audits_frame_id_key" ON "pii_audits"("frame_id");

-- CreateIndex
CREATE UNIQUE INDEX "control_samples_object_id_key" ON "control_samples"("object_id");

-- CreateIndex
CREATE INDEX "checkpoints_frame_id_idx" ON "checkpoints"("frame_id");

-- CreateIndex
CREATE UNIQUE INDEX "ontology_classes_name_key" ON "ontology_classes"("name");

-- CreateIndex
CREATE INDEX "audit_log_subject_type_subject_id_idx" ON "audit_log"("subject_type", "subject_id");

-- CreateIndex
CREATE INDEX "audit_log_actor_id_created_at_idx" ON "audit_log"("actor_id", "created_at");

-- CreateIndex
CREATE INDEX "notifications_user_id_read_at_idx" ON "notifications"("user_id", "read_at");

-- AddForeignKey
ALTER TABLE "session_health" ADD CONSTRAINT "session_health_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "frames" ADD CONSTRAINT "frames_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tracks" ADD CONSTRAINT "tracks_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "objects" ADD CONSTRAINT "objects_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "objects" ADD CONSTRAINT "objects_track_id_fkey" FOREIGN KEY ("track_id") REFERENCES "tracks"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "objects" ADD CONSTRAINT "objects_class_id_fkey" FOREIGN KEY ("class_id") REFERENCES "ontology_classes"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "provenance" ADD CONSTRAINT "provenance_object_id_fkey" FOREIGN KEY ("object_id") REFERENCES "objects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pii_audits" ADD CONSTRAINT "pii_audits_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ontology_classes" ADD CONSTRAINT "ontology_classes_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "ontology_classes"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
