-- DropForeignKey
ALTER TABLE "object_quality" DROP CONSTRAINT "object_quality_object_id_fkey";

-- DropTable
DROP TABLE "object_quality";
