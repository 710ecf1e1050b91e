-- DropForeignKey
ALTER TABLE "drivable_areas" DROP CONSTRAINT "drivable_areas_frame_id_fkey";

-- DropTable
DROP TABLE "drivable_areas";
