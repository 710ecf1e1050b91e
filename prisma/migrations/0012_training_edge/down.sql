-- DropForeignKey
ALTER TABLE "training_curve_points" DROP CONSTRAINT "training_curve_points_job_id_fkey";

-- DropForeignKey
ALTER TABLE "experiment_runs" DROP CONSTRAINT "experiment_runs_experiment_id_fkey";

-- DropForeignKey
ALTER TABLE "edge_telemetry" DROP CONSTRAINT "edge_telemetry_device_id_fkey";

-- DropIndex
DROP INDEX "models_task_state_idx";

-- AlterTable
ALTER TABLE "models" DROP COLUMN "dataset_commit_id",
DROP COLUMN "format",
DROP COLUMN "metrics",
DROP COLUMN "parent_version",
DROP COLUMN "promoted_at",
DROP COLUMN "retired_at",
DROP COLUMN "sha256",
DROP COLUMN "size_bytes",
DROP COLUMN "state",
DROP COLUMN "training_config",
DROP COLUMN "training_job_id";

-- DropTable
DROP TABLE "training_jobs";

-- DropTable
DROP TABLE "training_curve_points";

-- DropTable
DROP TABLE "training_sweeps";

-- DropTable
DROP TABLE "experiments";

-- DropTable
DROP TABLE "experiment_runs";

-- DropTable
DROP TABLE "promotions";

-- DropTable
DROP TABLE "edge_artifacts";

-- DropTable
DROP TABLE "edge_benchmarks";

-- DropTable
DROP TABLE "edge_forge_runs";

-- DropTable
DROP TABLE "edge_devices";

-- DropTable
DROP TABLE "edge_telemetry";

-- DropTable
DROP TABLE "edge_rollouts";

-- DropTable
DROP TABLE "cloud_sessions";
