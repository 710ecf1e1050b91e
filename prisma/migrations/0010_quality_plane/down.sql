-- DropForeignKey
ALTER TABLE "error_candidates" DROP CONSTRAINT "error_candidates_error_run_id_fkey";

-- DropForeignKey
ALTER TABLE "explore_projection_points" DROP CONSTRAINT "explore_projection_points_projection_id_fkey";

-- DropForeignKey
ALTER TABLE "blind_audit_items" DROP CONSTRAINT "blind_audit_items_audit_id_fkey";

-- DropTable
DROP TABLE "error_runs";

-- DropTable
DROP TABLE "error_candidates";

-- DropTable
DROP TABLE "calibrations";

-- DropTable
DROP TABLE "explore_eval_members";

-- DropTable
DROP TABLE "explore_projections";

-- DropTable
DROP TABLE "explore_projection_points";

-- DropTable
DROP TABLE "explore_tags";

-- DropTable
DROP TABLE "explore_views";

-- DropTable
DROP TABLE "blind_audits";

-- DropTable
DROP TABLE "blind_audit_items";
