-- CreateTable
CREATE TABLE "slo_samples" (
    "id" UUID NOT NULL,
    "process_id" TEXT NOT NULL,
    "route_group" TEXT NOT NULL,
    "requests" INTEGER NOT NULL,
    "errors" INTEGER NOT NULL,
    "within" INTEGER[],
    "since" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slo_samples_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "slo_samples_route_group_created_at_idx" ON "slo_samples"("route_group", "created_at");
