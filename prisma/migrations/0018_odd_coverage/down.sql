-- DropForeignKey
ALTER TABLE "odd_clique_rewards" DROP CONSTRAINT "odd_clique_rewards_clique_fkey";

-- DropTable
DROP TABLE "odd_clique_arms";

-- DropTable
DROP TABLE "odd_clique_rewards";
