-- DropForeignKey
ALTER TABLE "active_learning_batch_frames" DROP CONSTRAINT "active_learning_batch_frames_batch_id_fkey";

-- DropForeignKey
ALTER TABLE "active_learning_batch_frames" DROP CONSTRAINT "active_learning_batch_frames_frame_id_fkey";

-- DropForeignKey
ALTER TABLE "active_learning_retrains" DROP CONSTRAINT "active_learning_retrains_training_job_id_fkey";

-- DropTable
DROP TABLE "active_learning_batches";

-- DropTable
DROP TABLE "active_learning_batch_frames";

-- DropTable
DROP TABLE "active_learning_retrains";
