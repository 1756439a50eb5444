# Entry points; each target is a thin call to a script or playbook so the same steps run by hand.
.PHONY: lab lab-down test unit sanity lint molecule integration e2e bootstrap node-image

bootstrap:
	bash tools/bootstrap.sh

node-image: bootstrap
	bash tools/build_node_image.sh

test:
	bash tools/test.sh

unit sanity lint molecule integration e2e:
	bash tools/test.sh $@
