-- DropTable
DROP TABLE "campaigns";
