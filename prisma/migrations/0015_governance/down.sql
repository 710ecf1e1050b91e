-- DropForeignKey
ALTER TABLE "drift_findings" DROP CONSTRAINT "drift_findings_run_id_fkey";

-- AlterTable
ALTER TABLE "dataset_commits" DROP COLUMN "erased_session_ids";

-- DropTable
DROP TABLE "governance_state";

-- DropTable
DROP TABLE "spend_records";

-- DropTable
DROP TABLE "cost_certificates";

-- DropTable
DROP TABLE "erasures";

-- DropTable
DROP TABLE "governance_runs";

-- DropTable
DROP TABLE "drift_findings";

-- DropTable
DROP TABLE "slos";
