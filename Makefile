# Entry points; each target is a thin call to a script or playbook so the same steps run by hand.
ANSIBLE_PLAYBOOK = .venv/bin/ansible-playbook -i inventories/lab

.PHONY: lab lab-down lab-slurm test unit sanity lint molecule integration e2e bootstrap node-image

bootstrap:
	bash tools/bootstrap.sh

node-image: bootstrap
	bash tools/build_node_image.sh

lab: bootstrap
	bash tools/lab.sh

lab-down: bootstrap
	bash tools/lab_down.sh

# After make lab: the lab's Slurm (munge, slurmctld, slurmd) on its nodes, then the benchmark submitted from node1 by
# the non-root user gpuops across both nodes, judged like the other launchers.
lab-slurm: bootstrap
	$(ANSIBLE_PLAYBOOK) playbooks/lab_slurm.yml
	$(ANSIBLE_PLAYBOOK) playbooks/verify_training.yml -e gpuops_launcher=slurm -e gpuops_training_hosts=node1

test:
	bash tools/test.sh

unit sanity lint molecule integration e2e:
	bash tools/test.sh $@

# Lab control plane (etcd, kube-*, kwok fake nodes, MPI Operator) built from the Go module proxy; see docs/lab.md.
.PHONY: kube-binaries lab-control-plane lab-control-plane-down bench-lab-start
kube-binaries:
	bash tools/build_kube_binaries.sh

lab-control-plane: bootstrap kube-binaries
	$(ANSIBLE_PLAYBOOK) playbooks/lab.yml

lab-control-plane-down: bootstrap
	$(ANSIBLE_PLAYBOOK) playbooks/lab.yml -e lab_state=absent

bench-lab-start: bootstrap kube-binaries
	.venv/bin/python bench/lab_start.py
