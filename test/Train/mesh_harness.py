"""What the mesh tests share: MPI's environment for this machine's runs, and their command line.

A mesh test takes `ZCC MODEL.mlir DATA-FLAGS... -- MESH...`, each MESH a comma-separated list of
key=value (np=4,tp=2,zero=1).
"""
import os


def use_mpi():
    """Open MPI as root, more ranks than cores, one OpenMP thread per rank (the tests' default)."""
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")


def mesh_arguments(argv):
    """zcc, the model, train.bin's data flags and the meshes (their text as given) of argv[1:]."""
    zcc, model, rest = argv[1], argv[2], argv[3:]
    split = rest.index("--")
    return zcc, model, rest[:split], rest[split + 1:]


def mesh_fields(mesh):
    """np=4,tp=2 -> {"np": "4", "tp": "2"}."""
    return dict(kv.split("=") for kv in mesh.split(","))
