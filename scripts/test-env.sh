# Sourced by scripts/test.sh and scripts/test-sanitizers.sh: the environment every test of the suite runs in.
# Open MPI's point-to-point layer named (ob1, what it picks on one node anyway), so that every mpirun of the
# suite skips opening the others (Debian leaves out UCX's already): 0.2 s of each np 4 launch (0.44 -> 0.23 s),
# over hundreds of launches. A value the machine sets is kept.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
