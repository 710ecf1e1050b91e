-- DropTable
DROP TABLE "slo_samples";
