# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Slurm batch job for the training benchmark, one concern per file:

* ``options``: the job's options checked, every problem naming its option and what was expected;
* ``script``: the batch script built from them (directives, modules, environment, the ranks' launch line);
* ``state``: what sacct, scontrol and squeue say of a job, and which states end it, well or badly;
* ``sbatch``: sbatch's answer, a job id or an error worded with the option at fault;
* ``commands``: the Slurm commands themselves, run through the module's run_command;
* ``output``: the tail of the job's output file;
* ``flow``: what the slurm_job module does, in order.
"""
