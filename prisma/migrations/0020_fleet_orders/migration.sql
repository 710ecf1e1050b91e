-- CreateTable
CREATE TABLE "adaptive_cycles" (
    "id" UUID NOT NULL,
    "origin" TEXT NOT NULL DEFAULT 'manual',
    "request" JSONB NOT NULL,
    "evidence" JSONB NOT NULL DEFAULT '{}',
    "total_label_budget" INTEGER NOT NULL,
    "total_fleet_samples" INTEGER NOT NULL,
    "allocations" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'planned',
    "dispatch" JSONB,
    "orders_created_at" TIMESTAMPTZ(6),
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMPTZ(6),

    CONSTRAINT "adaptive_cycles_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fleet_plans" (
    "id" UUID NOT NULL,
    "cycle_id" UUID,
    "basis" JSONB NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fleet_plans_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fleet_orders" (
    "id" UUID NOT NULL,
    "cycle_id" UUID,
    "plan_id" UUID,
    "target" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "conditions" JSONB NOT NULL DEFAULT '[]',
    "samples" INTEGER NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'proposed',
    "reason" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fleet_orders_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "adaptive_cycles_created_at_idx" ON "adaptive_cycles"("created_at");

-- CreateIndex
CREATE INDEX "fleet_plans_created_at_idx" ON "fleet_plans"("created_at");

-- CreateIndex
CREATE INDEX "fleet_orders_state_created_at_idx" ON "fleet_orders"("state", "created_at");

-- CreateIndex
CREATE INDEX "fleet_orders_cycle_id_idx" ON "fleet_orders"("cycle_id");

-- CreateIndex
CREATE INDEX "fleet_orders_plan_id_idx" ON "fleet_orders"("plan_id");

-- AddForeignKey
ALTER TABLE "fleet_orders" ADD CONSTRAINT "fleet_orders_cycle_id_fkey" FOREIGN KEY ("cycle_id") REFERENCES "adaptive_cycles"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "fleet_orders" ADD CONSTRAINT "fleet_orders_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "fleet_plans"("id") ON DELETE CASCADE ON UPDATE CASCADE;
