-- DropForeignKey
ALTER TABLE "ego_streams" DROP CONSTRAINT "ego_streams_session_id_fkey";

-- DropForeignKey
ALTER TABLE "timeline_events" DROP CONSTRAINT "timeline_events_session_id_fkey";

-- DropForeignKey
ALTER TABLE "timeline_events" DROP CONSTRAINT "timeline_events_driving_event_id_fkey";

-- DropForeignKey
ALTER TABLE "driving_events" DROP CONSTRAINT "driving_events_session_id_fkey";

-- DropForeignKey
ALTER TABLE "lanes" DROP CONSTRAINT "lanes_frame_id_fkey";

-- DropForeignKey
ALTER TABLE "lanes" DROP CONSTRAINT "lanes_session_id_fkey";

-- DropForeignKey
ALTER TABLE "object_dynamics" DROP CONSTRAINT "object_dynamics_object_id_fkey";

-- DropTable
DROP TABLE "ego_streams";

-- DropTable
DROP TABLE "timeline_events";

-- DropTable
DROP TABLE "driving_events";

-- DropTable
DROP TABLE "lanes";

-- DropTable
DROP TABLE "object_dynamics";
