-- DropForeignKey
ALTER TABLE "public"."inspector_layouts" DROP CONSTRAINT "inspector_layouts_user_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."session_health_overrides" DROP CONSTRAINT "session_health_overrides_session_id_fkey";

-- DropIndex
DROP INDEX "public"."frames_session_id_timestamp_ms_idx";

-- DropIndex
DROP INDEX "public"."sessions_created_at_id_idx";

-- DropTable
DROP TABLE "public"."inspector_layouts";

-- DropTable
DROP TABLE "public"."session_health_overrides";

-- AlterTable
ALTER TABLE "public"."sessions" DROP COLUMN "target_fps",
DROP COLUMN "duplicate_count",
DROP COLUMN "rejected_count",
DROP COLUMN "expected_sensors",
DROP COLUMN "present_sensors";
