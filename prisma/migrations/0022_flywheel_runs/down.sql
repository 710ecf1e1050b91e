-- DropTable
DROP TABLE "flywheel_runs";

-- DropTable
DROP TABLE "gate_directed_runs";
