// Error mapping at the C boundary: internal status -> MPI error class, and error codes that
// carry a message. These run without MPI_Init (Error_class and Error_string are allowed then).
#include <gtest/gtest.h>
#include <mpi.h>

#include "runtime/status.h"

namespace weft::mpi {
int error_class_of(Status s);
int make_error_code(int error_class, const std::string& message);
}  // namespace weft::mpi

using namespace weft;

TEST(ErrorMapping, StatusMapsToTheMpiClass) {
  EXPECT_EQ(mpi::error_class_of(Status::ok), MPI_SUCCESS);
  EXPECT_EQ(mpi::error_class_of(Status::invalid_rank), MPI_ERR_RANK);
  EXPECT_EQ(mpi::error_class_of(Status::invalid_tag), MPI_ERR_TAG);
  EXPECT_EQ(mpi::error_class_of(Status::invalid_count), MPI_ERR_COUNT);
  EXPECT_EQ(mpi::error_class_of(Status::invalid_type), MPI_ERR_TYPE);
  EXPECT_EQ(mpi::error_class_of(Status::invalid_comm), MPI_ERR_COMM);
  EXPECT_EQ(mpi::error_class_of(Status::truncated), MPI_ERR_TRUNCATE);
  EXPECT_EQ(mpi::error_class_of(Status::not_supported), MPI_ERR_UNSUPPORTED_OPERATION);
  EXPECT_EQ(mpi::error_class_of(Status::peer_failed), MPIX_ERR_PROC_FAILED);
  EXPECT_EQ(mpi::error_class_of(Status::internal), MPI_ERR_INTERN);
}

TEST(ErrorMapping, CodesCarryTheirClassAndMessage) {
  int code = mpi::make_error_code(MPI_ERR_RANK, "MPI_Send: invalid rank 9 (argument 'dest')");
  EXPECT_NE(code, MPI_ERR_RANK);
  int cls = -1;
  ASSERT_EQ(MPI_Error_class(code, &cls), MPI_SUCCESS);
  EXPECT_EQ(cls, MPI_ERR_RANK);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  ASSERT_EQ(MPI_Error_string(code, text, &len), MPI_SUCCESS);
  EXPECT_STREQ(text, "MPI_Send: invalid rank 9 (argument 'dest')");
  EXPECT_EQ(len, int(strlen(text)));
  EXPECT_LE(code, MPI_ERR_LASTCODE);
}

TEST(ErrorMapping, EveryPredefinedClassHasAString) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  for (int c : {MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_TRUNCATE, MPI_ERR_IN_STATUS,
                MPI_ERR_RMA_RANGE, MPI_ERR_PROC_ABORTED, MPIX_ERR_PROC_FAILED}) {
    ASSERT_EQ(MPI_Error_string(c, text, &len), MPI_SUCCESS) << c;
    EXPECT_GT(len, 0) << c;
    int cls = -1;
    ASSERT_EQ(MPI_Error_class(c, &cls), MPI_SUCCESS);
    EXPECT_EQ(cls, c);
  }
}
