# Entry points; each target is a thin call to a script or playbook so the same steps run by hand.
ANSIBLE_PLAYBOOK = .venv/bin/ansible-playbook -i inventories/lab

.PHONY: lab lab-down lab-slurm lab-pytorch lab-pytorch-horovod test unit sanity lint molecule integration e2e pytorch-horovod bootstrap node-image

bootstrap:
	bash tools/bootstrap.sh

node-image: bootstrap
	bash tools/build_node_image.sh

lab: bootstrap
	bash tools/lab.sh

lab-down: bootstrap
	bash tools/lab_down.sh

# After make lab: the lab's Slurm (munge, slurmctld, slurmd) on its nodes, the non-root user gpuops's own Python
# environment on each node, then a scaling sweep (1, 2 and 4 ranks) submitted from node1 by gpuops, each size judged
# like the other launchers' runs, and the sweep's table and chart.
lab-slurm: bootstrap
	$(ANSIBLE_PLAYBOOK) playbooks/lab_slurm.yml
	$(ANSIBLE_PLAYBOOK) playbooks/python_env.yml
	$(ANSIBLE_PLAYBOOK) playbooks/scaling_sweep.yml -e gpuops_launcher=slurm -e gpuops_training_hosts=node1 \
		-e '{"gpuops_sweep_ranks": [1, 2, 4]}'

# After make lab: the PyTorch image (no Horovod) into both nodes' containerd, then a PyTorchJob across them.
lab-pytorch: bootstrap
	$(ANSIBLE_PLAYBOOK) playbooks/lab_pytorch.yml

lab-pytorch-horovod: bootstrap
	$(ANSIBLE_PLAYBOOK) playbooks/lab_pytorch_horovod.yml

test:
	bash tools/test.sh

unit sanity lint molecule integration e2e pytorch-horovod:
	bash tools/test.sh $@

# The lab's control plane alone (etcd and the kube-* components, started by kwokctl), built from the Go module
# proxy. With inventories/lab it makes no kwok fake nodes and starts no MPI Operator: the lab's nodes are the
# containers make lab runs, each with a real kubelet, and the operator runs in a pod there. See docs/lab.md.
.PHONY: kube-binaries lab-control-plane lab-control-plane-down bench-lab-start
kube-binaries:
	bash tools/build_kube_binaries.sh

lab-control-plane: bootstrap kube-binaries
	$(ANSIBLE_PLAYBOOK) playbooks/lab.yml

lab-control-plane-down: bootstrap
	$(ANSIBLE_PLAYBOOK) playbooks/lab.yml -e lab_state=absent

bench-lab-start: bootstrap kube-binaries
	.venv/bin/python bench/lab_start.py
