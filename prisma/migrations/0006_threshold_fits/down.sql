-- DropTable
DROP TABLE "threshold_fits";
