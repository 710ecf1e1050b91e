-- DropForeignKey
ALTER TABLE "fleet_orders" DROP CONSTRAINT "fleet_orders_cycle_id_fkey";

-- DropForeignKey
ALTER TABLE "fleet_orders" DROP CONSTRAINT "fleet_orders_plan_id_fkey";

-- DropTable
DROP TABLE "adaptive_cycles";

-- DropTable
DROP TABLE "fleet_plans";

-- DropTable
DROP TABLE "fleet_orders";
