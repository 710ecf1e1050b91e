-- Removes the seed classes only when no object references them (an object keeps its class: the
-- foreign key refuses the delete, and the rollback with it, rather than losing annotations).
DELETE FROM "ontology_classes" WHERE "id" BETWEEN 1 AND 166;

-- DropForeignKey
ALTER TABLE "ontology_aliases" DROP CONSTRAINT "ontology_aliases_class_id_fkey";

-- DropForeignKey
ALTER TABLE "annotations" DROP CONSTRAINT "annotations_asset_id_fkey";

-- DropTable
DROP TABLE "ontology_aliases";

-- DropTable
DROP TABLE "ontology_runs";

-- DropTable
DROP TABLE "review_batches";

-- DropTable
DROP TABLE "annotations";

-- DropTable
DROP TABLE "assets";

-- DropTable
DROP TABLE "project_label_configs";

-- AlterTable
ALTER TABLE "ontology_classes" DROP COLUMN "sources";

-- AlterTable
ALTER TABLE "objects" DROP COLUMN "job_id",
DROP COLUMN "rbox";
