-- CreateTable
CREATE TABLE "odd_clique_arms" (
    "clique" TEXT NOT NULL,
    "alpha" DOUBLE PRECISION NOT NULL,
    "beta" DOUBLE PRECISION NOT NULL,
    "observations" INTEGER NOT NULL DEFAULT 0,
    "labels" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "odd_clique_arms_pkey" PRIMARY KEY ("clique")
);

-- CreateTable
CREATE TABLE "odd_clique_rewards" (
    "id" UUID NOT NULL,
    "clique" TEXT NOT NULL,
    "allocated" INTEGER NOT NULL,
    "recall_before" DOUBLE PRECISION,
    "recall_after" DOUBLE PRECISION,
    "observed" BOOLEAN NOT NULL,
    "gain" DOUBLE PRECISION,
    "reward" DOUBLE PRECISION,
    "trials" DOUBLE PRECISION,
    "alpha_after" DOUBLE PRECISION NOT NULL,
    "beta_after" DOUBLE PRECISION NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "odd_clique_rewards_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "odd_clique_rewards_clique_created_at_idx" ON "odd_clique_rewards"("clique", "created_at");

-- AddForeignKey
ALTER TABLE "odd_clique_rewards" ADD CONSTRAINT "odd_clique_rewards_clique_fkey" FOREIGN KEY ("clique") REFERENCES "odd_clique_arms"("clique") ON DELETE CASCADE ON UPDATE CASCADE;
