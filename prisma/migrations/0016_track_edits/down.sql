-- DropForeignKey
ALTER TABLE "track_events" DROP CONSTRAINT "track_events_track_id_fkey";

-- AlterTable
ALTER TABLE "tracks" DROP COLUMN "attrs",
DROP COLUMN "updated_at";

-- DropTable
DROP TABLE "track_events";
