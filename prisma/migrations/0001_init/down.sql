-- DropForeignKey
ALTER TABLE "public"."session_health" DROP CONSTRAINT "session_health_session_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."frames" DROP CONSTRAINT "frames_session_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."tracks" DROP CONSTRAINT "tracks_session_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."objects" DROP CONSTRAINT "objects_frame_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."objects" DROP CONSTRAINT "objects_track_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."objects" DROP CONSTRAINT "objects_class_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."provenance" DROP CONSTRAINT "provenance_object_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."pii_audits" DROP CONSTRAINT "pii_audits_frame_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."checkpoints" DROP CONSTRAINT "checkpoints_frame_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."ontology_classes" DROP CONSTRAINT "ontology_classes_parent_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."notifications" DROP CONSTRAINT "notifications_user_id_fkey";

-- DropTable
DROP TABLE "public"."users";

-- DropTable
DROP TABLE "public"."sessions";

-- DropTable
DROP TABLE "public"."session_health";

-- DropTable
DROP TABLE "public"."frames";

-- DropTable
DROP TABLE "public"."tracks";

-- DropTable
DROP TABLE "public"."objects";

-- DropTable
DROP TABLE "public"."reviews";

-- DropTable
DROP TABLE "public"."provenance";

-- DropTable
DROP TABLE "public"."pii_audits";

-- DropTable
DROP TABLE "public"."control_samples";

-- DropTable
DROP TABLE "public"."checkpoints";

-- DropTable
DROP TABLE "public"."gold_sets";

-- DropTable
DROP TABLE "public"."inference_runs";

-- DropTable
DROP TABLE "public"."agent_runs";

-- DropTable
DROP TABLE "public"."ontology_classes";

-- DropTable
DROP TABLE "public"."audit_log";

-- DropTable
DROP TABLE "public"."notifications";

-- DropTable
DROP TABLE "public"."rate_limit_buckets";

-- DropEnum
DROP TYPE "public"."Role";
